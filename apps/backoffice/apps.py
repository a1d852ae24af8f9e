from django.apps import AppConfig
from django.contrib.admin import apps as admin_apps


class BackofficeConfig(AppConfig):
    """The back-office pages that read several domain apps: the dashboard of the admin
    index and the change-page summaries (template tags `backoffice`)."""

    default = True
    name = "apps.backoffice"
    label = "backoffice"
    verbose_name = "Back office"


class BackOfficeAdminConfig(admin_apps.AdminConfig):
    """django.contrib.admin, with the back-office site as its default site (listed in
    INSTALLED_APPS by its dotted path, in place of django.contrib.admin)."""

    default = False
    default_site = "apps.backoffice.site.BackOfficeSite"
