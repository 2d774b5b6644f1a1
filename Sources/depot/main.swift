print("depot")
