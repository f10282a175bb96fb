import { createHash } from 'node:crypto';

/** Reduces a server or tool name to the characters tool names allow (`[a-zA-Z0-9_-]`). */
export function normalizeMcpName(name: string): string {
  return name.replace(/[^a-zA-Z0-9_-]/g, '_');
}

/** Builds the name an MCP tool is exposed under: `mcp__<server>__<tool>`, both parts normalized. */
export function buildMcpToolName(serverName: string, toolName: string): string {
  return `mcp__${normalizeMcpName(serverName)}__${normalizeMcpName(toolName)}`;
}

/** A short, stable tag of a raw name, used to tell apart names that normalize alike. */
export function mcpNameTag(raw: string): string {
  return createHash('sha256').update(raw).digest('hex').slice(0, 6);
}

/**
 * Names a server's tools, keeping them unique after normalization: when several raw
 * names normalize alike (`a.b` and `a_b`), a name that needed no normalization keeps the
 * plain form and every other one gets a `_<tag>` suffix derived from its raw name, so
 * the result does not depend on listing order. Exact duplicates get `undefined` after
 * the first (a server must not list a name twice).
 */
export function assignMcpToolNames(
  serverName: string,
  toolNames: readonly string[],
): Array<string | undefined> {
  const byPlainName = new Map<string, Set<string>>();
  for (const raw of toolNames) {
    const plain = buildMcpToolName(serverName, raw);
    const raws = byPlainName.get(plain) ?? new Set<string>();
    raws.add(raw);
    byPlainName.set(plain, raws);
  }
  const seen = new Set<string>();
  return toolNames.map((raw) => {
    if (seen.has(raw)) return undefined;
    seen.add(raw);
    const plain = buildMcpToolName(serverName, raw);
    const collides = (byPlainName.get(plain)?.size ?? 0) > 1;
    const isExact = normalizeMcpName(raw) === raw;
    return collides && !isExact ? `${plain}_${mcpNameTag(raw)}` : plain;
  });
}
