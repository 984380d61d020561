"""Tests with teeth: mutants of a task's reference, and how many of them its tests
kill (`codetrial tasks --audit`)."""
