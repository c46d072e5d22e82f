"""Moderation (issue 25): roles, the reports queue, mutes, bans, removing
chat messages, and the audit log of every moderator action."""
