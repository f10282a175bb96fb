// Exits at once with an error message, as a misconfigured MCP server would.
process.stderr.write('missing API token\n');
process.exit(3);
