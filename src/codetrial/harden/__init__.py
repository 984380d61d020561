"""Tests with teeth: hardened suites whose tasks gain tests on inputs generated from
their references (`codetrial harden`), and mutants of each reference to measure how
many its tests kill (`codetrial tasks --audit`)."""
