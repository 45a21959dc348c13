"""original: the 2018 PATE-GAN code release (TensorFlow 1) and its corrected twin."""
