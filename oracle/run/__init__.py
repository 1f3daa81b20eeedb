"""Running a suite: prompts, rendering and tokenization, waves of requests, ladders, overlap."""
