"""Teaching material made from the chapters: student copies, the answer sheet, the workshop plan."""
