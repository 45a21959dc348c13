"""borealis PATE-GAN (PyTorch, BorealisAI private-data-generation): buggy rebuild and corrected twin."""
