print("ManagedCache feed example: coming soon")
