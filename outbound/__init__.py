"""Where the server may send a request of its own (a webhook; a push endpoint is the same
kind of URL): the checks of a URL and of every address its host stands for, against SSRF
(`targets`), and the name lookups they need, bounded in time and in threads (`lookups`). Below
both the API, which checks a URL when a player sets it, and the workers, which check every
new connection again when they deliver.
"""
