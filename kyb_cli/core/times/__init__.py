"""Time: how kyb writes times (rfc3339) and how it reads time arguments."""
