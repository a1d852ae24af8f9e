"""Template tags of the back-office change pages: the summaries of apps.core.admin_display."""

from django import template

from apps.core import admin_display

register = template.Library()


def _today():
    from apps.policies.selectors import today

    return today()


@register.simple_tag(takes_context=True)
def vehicle_summary(context, vehicle):
    return admin_display.vehicle_summary(user=context["request"].user, vehicle=vehicle, on=_today())


@register.simple_tag(takes_context=True)
def driver_summary(context, driver):
    return admin_display.driver_summary(user=context["request"].user, driver=driver, on=_today())


@register.simple_tag(takes_context=True)
def client_summary(context, client):
    return admin_display.client_summary(user=context["request"].user, client=client, on=_today())
