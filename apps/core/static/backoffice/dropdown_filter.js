// A long list filter shown as one <select>: choosing an option opens its filtered list.
if (!window.backofficeDropdownFilter) {
  window.backofficeDropdownFilter = true;
  document.addEventListener("change", function (event) {
    if (event.target.classList.contains("bo-dropdown-filter")) {
      window.location.search = event.target.value;
    }
  });
}
