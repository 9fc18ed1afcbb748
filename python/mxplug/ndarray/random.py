"""Sampling (MXNet's ``mx.nd.random``); functions are added from the random plugin's ops."""
