(function () {
  "use strict";
  // Copy buttons of the feedback-link page: a button data-copy="<input id>" copies the input's
  // value (a relative address made absolute) and says so in the element data-copied="<id>".
  // Without the script the buttons stay hidden and the address is selectable text.
  document.querySelectorAll("button[data-copy]").forEach(function (btn) {
    var input = document.getElementById(btn.getAttribute("data-copy"));
    var said = document.querySelector('[data-copied="' + btn.getAttribute("data-copy") + '"]');
    if (!input || !navigator.clipboard) {
      return;
    }
    if (input.value.charAt(0) === "/") {
      input.value = new URL(input.value, window.location.href).href;
    }
    btn.hidden = false;
    btn.addEventListener("click", function () {
      navigator.clipboard.writeText(input.value).then(function () {
        if (said) { said.textContent = "Copied."; }
      }, function () {
        input.select();
        if (said) { said.textContent = "Select the address and copy it."; }
      });
    });
  });
})();
