"""Logits against a reference: the teacher-forced path, KLD statistics, the report section."""
