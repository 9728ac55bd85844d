"""The learning loop: suggestions from scrubbed results and their shadow rank, the suggestions file and its
reviews, EvalCase proposals and their acceptance into the regression suite, the reviewed aliases file."""
