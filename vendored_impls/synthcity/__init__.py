"""synthcity PATE-GAN (PyTorch): buggy rebuild and corrected twin."""
