"""The production replay scaled out and repeated: shards with one common start, repeats, their runs merged."""
