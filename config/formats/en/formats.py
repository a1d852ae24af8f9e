"""Dates and times as the back-office shows them: every timestamp names its time zone
(staff, carriers and insurers sit in different zones), dates as US staff write them."""

DATETIME_FORMAT = "M j, Y, H:i T"
SHORT_DATETIME_FORMAT = "m/d/Y H:i T"
DATE_FORMAT = "M j, Y"
SHORT_DATE_FORMAT = "m/d/Y"
