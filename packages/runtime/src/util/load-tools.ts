// @delegate/tools pulls in the shell, search and MCP machinery; the runtime needs it only
// once a session runs, so it is loaded on first use rather than at import time.
import type * as Tools from '@delegate/tools';

type ToolsModule = typeof Tools;

let loading: Promise<ToolsModule> | undefined;

/** The `@delegate/tools` module, imported on first call and shared afterwards. */
export function loadTools(): Promise<ToolsModule> {
  loading ??= import('@delegate/tools');
  return loading;
}
