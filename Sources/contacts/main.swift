print("contacts: not built yet")
