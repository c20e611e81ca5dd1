"""A small cache whose entries expire: to be written."""
