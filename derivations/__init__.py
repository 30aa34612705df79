"""The derivations bundled with symseq: one module per seed handout section (installed as symseq.derivations)."""
