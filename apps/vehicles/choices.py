from django.db import models


class VehicleStatus(models.TextChoices):
    ACTIVE = "ACTIVE"
    INACTIVE = "INACTIVE"
    OUT_OF_SERVICE = "OUT_OF_SERVICE"
    SOLD = "SOLD"
