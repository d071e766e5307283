"""Self-play training shared by AlphaZero and (later) Dotsformer."""
