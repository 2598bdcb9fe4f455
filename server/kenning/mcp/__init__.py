"""``kenning mcp``: the index served to coding agents as Model Context Protocol tools.

Thin, like the language server: ``roots`` keeps one index per workspace root (writer when nobody
else writes it, a follower of the language server's commits when it does), ``tools`` turns tool
arguments into engine calls and answers into compact text, ``server`` wires them to the official
MCP SDK over stdio.
"""
