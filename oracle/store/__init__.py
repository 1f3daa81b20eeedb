"""What is kept on disk: records, references, runtime identity."""
