"""What every layer may use: errors reported in one line, failures as the user reads them, secret
redaction, simple-type checks, and the component protocols (answerer, judge) with their model clients."""
