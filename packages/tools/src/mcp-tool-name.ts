import { createHash } from 'node:crypto';

/** Longest tool name the Messages API accepts (`^[a-zA-Z0-9_-]{1,128}$`). */
export const MAX_MCP_TOOL_NAME_LENGTH = 128;

/**
 * Longest server part of a tool name kept whole: it leaves at least 32 characters for the
 * tool's part, and longer server names are rare enough that keeping the plain
 * `mcp__<server>__` prefix (which server-level rules match) matters more.
 */
export const MAX_MCP_SERVER_PART_LENGTH = MAX_MCP_TOOL_NAME_LENGTH - 'mcp____'.length - 32;

/** Reduces a server or tool name to the characters tool names allow (`[a-zA-Z0-9_-]`). */
export function normalizeMcpName(name: string): string {
  return name.replace(/[^a-zA-Z0-9_-]/g, '_');
}

/** A short, stable tag of a raw name, used to tell apart names that normalize alike. */
export function mcpNameTag(raw: string): string {
  return createHash('sha256').update(raw).digest('hex').slice(0, 6);
}

/** Cuts `normalized` to `maxLength` characters, ending in `_<tag of raw>` when it had to be cut. */
function shorten(normalized: string, raw: string, maxLength: number): string {
  if (normalized.length <= maxLength) return normalized;
  const tag = mcpNameTag(raw);
  return `${normalized.slice(0, maxLength - tag.length - 1)}_${tag}`;
}

/**
 * The `mcp__<server>__` start of the names of a server's tools: the server's name
 * normalized, and cut to 89 characters with a `_<6 hex>` tag of the raw name when longer.
 */
export function mcpServerToolPrefix(serverName: string): string {
  return `mcp__${shorten(normalizeMcpName(serverName), serverName, MAX_MCP_SERVER_PART_LENGTH)}__`;
}

/**
 * Builds the name an MCP tool is exposed under: `mcp__<server>__<tool>`, both parts
 * normalized. A name that would be longer than the API allows (128 characters) is cut, and
 * the cut part ends in a `_<6 hex>` tag of the raw name, so names stay apart.
 */
export function buildMcpToolName(serverName: string, toolName: string): string {
  const prefix = mcpServerToolPrefix(serverName);
  return `${prefix}${shorten(normalizeMcpName(toolName), toolName, MAX_MCP_TOOL_NAME_LENGTH - prefix.length)}`;
}

/** Appends `_<tag>` to a tool name, cutting the name first when the result would be too long. */
export function withMcpNameTag(name: string, tag: string): string {
  const room = MAX_MCP_TOOL_NAME_LENGTH - tag.length - 1;
  return `${name.length > room ? name.slice(0, room) : name}_${tag}`;
}

/**
 * Names a server's tools, keeping them unique after normalization: when several raw
 * names normalize alike (`a.b` and `a_b`), a name that needed no normalization keeps the
 * plain form and every other one gets a `_<tag>` suffix derived from its raw name, so
 * the result does not depend on listing order. Exact duplicates get `undefined` after
 * the first (a server must not list a name twice). Every name is valid for the API
 * (`[a-zA-Z0-9_-]`, at most 128 characters).
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
  const taken = new Set<string>();
  return toolNames.map((raw) => {
    if (seen.has(raw)) return undefined;
    seen.add(raw);
    const plain = buildMcpToolName(serverName, raw);
    const collides = (byPlainName.get(plain)?.size ?? 0) > 1;
    const isExact = plain === `${mcpServerToolPrefix(serverName)}${raw}`;
    let name = collides && !isExact ? withMcpNameTag(plain, mcpNameTag(raw)) : plain;
    // Only a name built to look like another's tagged form can still meet one here.
    for (let attempt = 1; taken.has(name); attempt++) {
      name = withMcpNameTag(plain, mcpNameTag(`${raw}\0${attempt}`));
    }
    taken.add(name);
    return name;
  });
}
