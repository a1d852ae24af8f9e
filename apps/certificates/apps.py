from django.apps import AppConfig


class CertificatesConfig(AppConfig):
    name = "apps.certificates"
    label = "certificates"
    verbose_name = "Certificates"
