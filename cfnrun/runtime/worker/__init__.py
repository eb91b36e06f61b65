"""The worker: what runs in the provider's interpreter (placeholder, split follows)."""
