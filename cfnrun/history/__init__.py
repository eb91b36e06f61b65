"""Recorded operations: what cfnrun drove, kept in SQLite under the project's .cfnrun/ folder."""
