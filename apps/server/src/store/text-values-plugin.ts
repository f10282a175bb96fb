import {
  type KyselyPlugin,
  OperationNodeTransformer,
  type PluginTransformQueryArgs,
  type PluginTransformResultArgs,
  type PrimitiveValueListNode,
  type QueryResult,
  type RootOperationNode,
  type UnknownRow,
  type ValueNode,
} from 'kysely';

/** What stands for a character a store cannot keep: U+FFFD, the replacement character. */
export const REPLACEMENT_CHARACTER = '\ufffd';

/**
 * A lone surrogate (half of a UTF-16 pair, as a cut string or a model's output can hold) as one
 * U+FFFD. Each database encodes it its own way (SQLite gave back three U+FFFD, PostgreSQL one),
 * so every store replaces it the same way before it is sent.
 */
export function wellFormed(text: string): string {
  // ES2024 methods, in Node since 20; the project's TypeScript lib is ES2023.
  const value = text as string & { isWellFormed(): boolean; toWellFormed(): string };
  return value.isWellFormed() ? text : value.toWellFormed();
}

/** NUL as U+FFFD (PostgreSQL's text type cannot hold one), and lone surrogates as `wellFormed`. */
export function postgresText(text: string): string {
  const formed = wellFormed(text);
  return formed.includes('\0') ? formed.replaceAll('\0', REPLACEMENT_CHARACTER) : formed;
}

function fixValue(value: unknown, fix: (text: string) => string): unknown {
  return typeof value === 'string' ? fix(value) : value;
}

class TextValueTransformer extends OperationNodeTransformer {
  constructor(private readonly fix: (text: string) => string) {
    super();
  }

  protected override transformValue(node: ValueNode): ValueNode {
    const value = fixValue(node.value, this.fix);
    return value === node.value ? super.transformValue(node) : { ...node, value };
  }

  protected override transformPrimitiveValueList(
    node: PrimitiveValueListNode,
  ): PrimitiveValueListNode {
    return { ...node, values: node.values.map((value) => fixValue(value, this.fix)) };
  }
}

/**
 * Applies `fix` to every text value a query sends, so what a store keeps is what it gives back
 * and the same in every store: a run whose text the database refuses would fail to save and
 * stay `running`.
 */
export class TextValues implements KyselyPlugin {
  private readonly transformer: TextValueTransformer;

  constructor(fix: (text: string) => string) {
    this.transformer = new TextValueTransformer(fix);
  }

  transformQuery(args: PluginTransformQueryArgs): RootOperationNode {
    return this.transformer.transformNode(args.node);
  }

  async transformResult(args: PluginTransformResultArgs): Promise<QueryResult<UnknownRow>> {
    return args.result;
  }
}
