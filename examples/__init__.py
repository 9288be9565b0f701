"""Seed exercises run on the reference model (see README.md here). A package so that
`python -m examples.NAME` works from the repository root and the tests can import them."""
