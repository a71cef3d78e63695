"""The chapters as notebooks: execution, nbval's rules, glued values, the book's labels, visible code."""
