//! The MCP stdio bridge of `termsprawlctl mcp` (skeleton).
