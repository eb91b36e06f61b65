"""The browser console on serve's port: what is served and the local stacks, as server-rendered HTML.

``routes.py`` adds its GET routes to serve's application (the APIs' routes stay as they are);
``pages.py`` renders each page from what ``sources.py``'s protocol gives, every text HTML-escaped.
"""
