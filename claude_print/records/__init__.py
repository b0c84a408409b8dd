"""Reading Claude Code's records: the session's transcript (transcript), what it says
the session offers (session_info), and what its tokens cost (pricing).

May import: ground.
"""
