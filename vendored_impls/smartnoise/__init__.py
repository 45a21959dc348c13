"""smartnoise PATE-GAN (PyTorch, OpenDP smartnoise-synth): buggy rebuild and corrected twin."""
