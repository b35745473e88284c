"""Agent Skills: folders of know-how (`SKILL.md` and its reference files) that the model loads when needed.

`discovery.find_skills` finds a session's skills (the project's, the user's, the bundled ones in `bundled/`);
`skill_file` reads one. The system prompt lists their names and descriptions (agent/system_prompt.py), the
`skill` tool loads one (tools/skill.py), and each is a slash command (agent/session_commands.py).
"""
