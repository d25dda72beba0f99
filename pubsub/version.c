/* version.c - keeps librdps non-empty until the pub/sub API lands. */
