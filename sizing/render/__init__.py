"""Rendering of result objects as table, markdown, JSON or CSV text. Results never render
themselves: the modules here turn them into text."""
