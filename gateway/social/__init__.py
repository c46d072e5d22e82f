"""Friends and chat (issue 18): the social graph with presence, private
messages and table chat, each user's social feed, reports and the word
filter. Redis keys: services/core/keys.py."""
