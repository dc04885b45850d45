print("padgate")
