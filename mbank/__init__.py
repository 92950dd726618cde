"""mbank: a governed markdown memory bank served to coding agents over MCP."""
