"""Tasks and experiments: what the chapters run on the mechanism.

Text to ids to vectors (``tokenizer``, then ``embeddings``), the recurrent baseline and its
limits (``rnn``, ``recall``), heads that specialise (``heads``), toy tasks (``data``) and
the training loop (``loop``, which chapter 4 uses too) with chapter 7's evaluation and
stored adder (``training``). They import the mechanism; the mechanism never imports
them.
"""
