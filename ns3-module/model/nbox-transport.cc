// placeholder: replaced by the component's implementation
