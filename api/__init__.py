"""HTTP API for researchers (Django REST framework, token auth, OpenAPI schema at /api/schema/)."""
