"""updated: the 2021 PATE-GAN code release (TensorFlow 1) and its corrected twin."""
