"""What the caller sees: `claude -p`'s output, field for field. The result object and
the text and json renderings (output), the stream-json events made from transcript
records (stream), the shapes captured per release (shapes, generated), and what goes
to stdout and stderr (emit).

May import: records, tui, ground.
"""
