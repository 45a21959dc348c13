"""turing: reprosyn's PATE-GAN (TensorFlow 1) and its corrected twin."""
