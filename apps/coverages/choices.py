"""Coverage statuses (the spec's "coverage assignment" statuses, section 3)."""

from django.db import models


class CoverageStatus(models.IntegerChoices):
    RESPONSE_NEEDED_REMOVE = 1, "Response needed (remove)"
    DECLINED = 2, "Coverage declined"
    SCHEDULED_UNIT = 4, "Sponsored scheduled unit"
    SCHEDULED_DRIVER = 7, "Sponsored scheduled driver"


VEHICLE_STATUSES = {1, 2, 4}
DRIVER_STATUSES = {1, 2, 7}
ENDING_STATUSES = {1, 2}

VERIFICATION_STATUSES = ["ACTIVE", "INACTIVE", "NOT_FOUND"]
VEHICLE_VERIFICATION_STATUSES = ["ACTIVE", "INACTIVE"]
